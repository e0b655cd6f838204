"""zoo.tuning"""
