"""tensorweave.framework"""
