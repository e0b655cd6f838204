"""zoo.evaluation"""
