"""Models and attention from outside attnviz: Hugging Face encoder-decoder folders, JoeyNMT
checkpoints, and attention matrices as files, each read into the same ``Alignment`` trace every
view draws."""

__all__: list[str] = []
