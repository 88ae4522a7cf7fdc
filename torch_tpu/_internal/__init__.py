"""Names PyTorch itself looks up in the tpu backend's package."""
