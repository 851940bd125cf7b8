// The Settings page's Mail section (filled by the issue-27 work on Mail).

export function MailSettings() {
  return null;
}
