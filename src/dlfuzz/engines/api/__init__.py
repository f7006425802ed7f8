"""The API engine: single library API calls, compared with their counterparts.

``libspecs`` loads the hand-editable format-2 spec files (per library, and the numpy spec
set), ``libgen`` and ``rulegen`` turn a spec into concrete ``ApiCase`` objects,
``engine.ApiEngine`` drives them for a campaign. None of these modules imports a deep
learning library: the host stays light.
"""
