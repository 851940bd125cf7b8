import { render } from 'preact';
import { describe, expect, it } from 'vitest';
import { getState, setState, useApp } from '../../src/state';

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
