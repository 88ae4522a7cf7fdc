"""First steps on the tpu device (the XLA CPU PJRT plugin when no TPU or GPU
is attached). Run: python examples/quickstart.py"""

import torch  # torch_tpu loads itself through PyTorch's backend autoload

print("tpu available:", torch.tpu.is_available(), "devices:", torch.tpu.device_count())
props = torch.tpu.get_device_properties(0)
print(f"device 0: {props.name} on {props.platform} (PJRT C API {props.pjrt_api_version})")

x = torch.arange(12, dtype=torch.float32, device="tpu").reshape(3, 4)
x[:, 0] = -1.0                    # write through a view
x.t()[1].fill_(7.0)               # write through a transposed view
y = x.cpu()
print("x on tpu, read back:\n", y)

z = torch.zeros(4, device="tpu")
z.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
print("item:", z[2].item())

import torch_tpu.debug
torch_tpu.debug.metrics_report()
