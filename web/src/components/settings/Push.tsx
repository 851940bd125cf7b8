// The Settings page's Push section (filled by the issue-27 work on Push).

export function PushSettings() {
  return null;
}
