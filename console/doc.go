// Package console is the bridge's web console: a dependency-free page, served
// at / with its assets under /console/, for trying the agents behind the
// bridge in a browser.
//
// The page is plain HTML, CSS and ES modules embedded in the binary: there is
// no build step, no CDN and no request to anywhere but the bridge itself. It
// talks to the bridge only through the public routes every AG-UI client uses
// (GET /agents, POST /agents/{name}, the thread snapshot, cancel and journal
// routes), so anything it can show, any other client can get too; that is
// also why it lives in its own package, importing nothing of the bridge.
package console
