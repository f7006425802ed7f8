"""Program-level engine (MoCo)."""
