"""RMSProp and Adagrad (MindSpore 2.x formulas)."""

__all__: list[str] = []
