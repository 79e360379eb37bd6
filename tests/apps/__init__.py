"""Real applications the tests load: each started and stopped by the test that needs it."""
