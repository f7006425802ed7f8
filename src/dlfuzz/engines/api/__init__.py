"""The baseline API-level fuzzer: one numpy-like function, the same input, every library.

``specs`` loads the hand-editable JSON description of the functions, ``generate`` turns a
spec into concrete ``ApiCase`` objects, ``engine.ApiEngine`` drives both for a campaign.
None of these modules imports a deep learning library: the host stays light.
"""
