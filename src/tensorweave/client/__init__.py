"""Tools users open on what a session produced: `timeline` (Chrome traces of traced
steps). TF1 programs import it as `tensorflow.python.client.timeline`
(tensorweave/python/client)."""
