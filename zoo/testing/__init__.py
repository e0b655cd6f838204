"""zoo.testing"""
