// Loaded by every test process (tap's node-arg in package.json, after tsx). Each file says why.
import './bundled-typebox.mjs';
import './plain-children.mjs';
