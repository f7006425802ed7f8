"""Sandboxed execution: one long-lived worker process per backend.

``pool`` (host side: Worker, Pool, outcomes of dead or hung workers), ``process``
(spawning, death detection, group kill, log drain), ``protocol`` (framing on the
pipes), ``worker`` (the process that imports one library and serves cases).
"""
