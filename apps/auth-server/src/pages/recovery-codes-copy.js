// The recovery codes page's "Copy" button: puts the codes, one a line, on the clipboard and says
// so in the status line. An external file, because the Content-Security-Policy allows no inline
// script; without JavaScript the button stays hidden and "Download" still works. Its two answers
// are hidden elements of the page, written in the page's language.
(() => {
  const button = document.getElementById('copy-recovery-codes');
  const status = document.getElementById('recovery-codes-status');
  if (!button || !status || !navigator.clipboard) return;
  const say = (id) => () => {
    status.textContent = document.getElementById(id)?.textContent ?? '';
  };
  const codes = Array.from(document.querySelectorAll('[data-recovery-code]')).map((element) =>
    element.getAttribute('data-recovery-code'),
  );
  button.hidden = false;
  button.addEventListener('click', () => {
    navigator.clipboard
      .writeText(`${codes.join('\n')}\n`)
      .then(say('recovery-codes-copied'), say('recovery-codes-copy-refused'));
  });
})();
