"""Rendering a recipe into argv, runtime env and KubeRay manifests."""
