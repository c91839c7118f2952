"""tensorweave.ops"""
