"""NLLLoss, SmoothL1Loss, HuberLoss, KLDivLoss, BCELoss (MindSpore 2.x)."""

__all__: list[str] = []
