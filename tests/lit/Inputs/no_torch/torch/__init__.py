# Stands in for a machine without PyTorch: importing it fails as a missing package does.
raise ImportError("PyTorch is hidden from this test")
