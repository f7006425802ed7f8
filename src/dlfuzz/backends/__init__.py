"""Backends: a library plus an execution mode. See ``base.Backend`` for the protocol."""
