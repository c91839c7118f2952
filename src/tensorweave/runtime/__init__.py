"""tensorweave.runtime"""
