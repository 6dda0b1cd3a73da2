import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { takeSignin } from './lib/session';

// A sign-in redirect's fragment holds the session's path: keep it, and show the board.
const shown = takeSignin(location.hash);
if (shown !== null) history.replaceState(null, '', location.pathname + location.search + shown);

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');

export default mount(App, { target });
