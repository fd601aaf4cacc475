"""Many models at once: ``opspec scan`` and :func:`opspec.scan`.

Each model is one independent task (:mod:`.steps` says what is asked of it, :mod:`.guard` keeps a
crash, a hang or a runaway allocation to that model); the tasks run on the standard library's
process pool (:mod:`.local`) or on a Ray cluster (:mod:`.on_ray`); each finished model is one
JSON line of the report (:mod:`.report`), which a later run reads to skip what it holds.
"""
