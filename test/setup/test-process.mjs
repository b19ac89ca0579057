// Loaded by every test process (tap's node-arg in package.json, after test/setup/ts-loader.mjs). Each file says why.
import './bundled-typebox.mjs';
import './plain-children.mjs';
