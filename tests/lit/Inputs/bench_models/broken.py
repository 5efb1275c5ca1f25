"""A model file whose model() fails: `kiln bench` must name the file and the reason."""


def model(size):
    raise ValueError(f"no such size here: {size}")
