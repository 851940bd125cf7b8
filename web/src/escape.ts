/** Text made safe to put into HTML (as an element's text or an attribute's quoted value). */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '#39' }[ch]};`);
}
