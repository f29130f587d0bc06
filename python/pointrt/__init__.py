"""pointrt: export PyTorch point-cloud networks to one ONNX file and run them in C++."""
__version__ = "0.1.0"
