"""tensorweave.autodiff"""
