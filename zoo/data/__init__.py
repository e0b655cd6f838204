"""zoo.data"""
