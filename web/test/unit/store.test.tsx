import { render } from 'preact';
import { describe, expect, it } from 'vitest';
import { closeHelp, followHelp, getState, openHelp, setState, useApp } from '../../src/state';
import { routed } from '../../src/store';

function Who() {
  const s = useApp();
  return <p>{s.signInMessage ?? 'none'}</p>;
}

describe('useApp', () => {
  it('shows a change made right after the first render, before effects would run', async () => {
    setState({ signInMessage: null });
    const root = document.createElement('div');
    render(<Who />, root);
    expect(root.textContent).toBe('none');
    // A 401 to the first whoami can land here: after the render, before any deferred effect.
    setState({ signInMessage: 'refused' });
    await new Promise((r) => setTimeout(r, 50));
    expect(root.textContent).toBe('refused');
    expect(getState().signInMessage).toBe('refused');
    render(null, root);
  });
});

/** A dialog as the browser has it: close() closes at once, and its close event comes a task later. */
class FakeDialog extends EventTarget {
  open = false;
  showModal() {
    this.open = true;
  }
  close() {
    if (!this.open) return;
    this.open = false;
    setTimeout(() => this.dispatchEvent(new Event('close')), 0);
  }
  /** Esc: cancel first (the store hears of it), then the dialog closes if it is still open. */
  esc() {
    this.dispatchEvent(new Event('cancel'));
    this.close();
  }
}

describe('the help dialog follows the store', () => {
  it('opens and closes with the store, and a ? right after Esc is never lost', async () => {
    const d = new FakeDialog();
    const stop = followHelp(d as unknown as HTMLDialogElement);
    openHelp();
    expect(d.open).toBe(true);
    d.esc();
    expect(getState().help).toBe(false);
    openHelp(); // before the close event of the Esc has been handled
    await new Promise((r) => setTimeout(r, 10));
    expect(d.open).toBe(true);
    expect(getState().help).toBe(true);
    // Closed another way (a script): the store follows once the dialog says so.
    d.open = false;
    d.dispatchEvent(new Event('close'));
    expect(getState().help).toBe(false);
    // A navigation closes it.
    openHelp();
    setState(routed({ name: 'history' }));
    expect(d.open).toBe(false);
    stop();
    openHelp();
    expect(d.open).toBe(false);
    closeHelp();
  });
});
