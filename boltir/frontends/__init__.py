"""Importers: ONNX (`onnx.py`) and PyTorch (`torch.py`) into the `graph` dialect."""
