"""Scaling a study out: the Ray executor (see `ray_executor`)."""
