// The Data Explorer's entry: the styles and the app, mounted in the page's #app.

import { render } from 'preact';
import { App } from './app';
import './styles.css';

render(<App />, document.getElementById('app')!);
