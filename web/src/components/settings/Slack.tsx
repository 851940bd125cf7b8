// The Settings page's Slack section (filled by the issue-27 work on Slack).

export function SlackSettings() {
  return null;
}
