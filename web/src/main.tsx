import { render } from 'preact';
import { storedToken, takeTokenFromFragment } from './auth';
import { App } from './components/App';
import { pruneDrafts } from './drafts';
import { signIn } from './state';
import './styles.css';

// A token in the fragment (the link `loopback serve` prints) wins over one kept from before; either
// way it leaves the address bar before anything else happens.
const fromLink = takeTokenFromFragment();
const token = fromLink ?? storedToken();
pruneDrafts();
if (token) void signIn(token);
// The link opened in a tab that already shows the inbox changes only the fragment: no page load.
addEventListener('hashchange', () => {
  const t = takeTokenFromFragment();
  if (t) void signIn(t);
});
render(<App />, document.getElementById('app')!);
