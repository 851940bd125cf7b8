// The Settings page's Deadline section (filled by the issue-27 work on Deadline).

export function DeadlineSettings() {
  return null;
}
