"""zoo.training"""
