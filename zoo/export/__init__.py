"""zoo.export"""
