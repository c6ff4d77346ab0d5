"""Stateful fakes of GitHub, Linear and Slack as they stood at T."""
