"""zoo.search"""
