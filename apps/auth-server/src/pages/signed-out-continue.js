// The signed-out page with front-channel logout iframes (OIDC Front-Channel Logout 1.0 §3): once
// every iframe has loaded (or after a few seconds, whichever comes first), continue to the relying
// party's post-logout redirect. An external file, because the Content-Security-Policy allows no
// inline script; without JavaScript the page shows a link instead.
(() => {
  const link = document.getElementById('continue');
  if (!link) return;
  const frames = Array.from(document.querySelectorAll('iframe.frontchannel-logout'));
  let remaining = frames.length;
  let done = false;
  const go = () => {
    if (done) return;
    done = true;
    window.location.assign(link.href);
  };
  for (const frame of frames) {
    frame.addEventListener('load', () => {
      remaining -= 1;
      if (remaining <= 0) go();
    });
    frame.addEventListener('error', () => {
      remaining -= 1;
      if (remaining <= 0) go();
    });
  }
  if (remaining === 0) go();
  setTimeout(go, 5000);
})();
