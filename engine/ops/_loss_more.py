"""nll_loss, smooth_l1_loss, huber_loss, kl_div, binary_cross_entropy."""

__all__: list[str] = []
