"""Build-time fixes for the training image, each self-neutralizing: a no-op once upstream has the fix."""
