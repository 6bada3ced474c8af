/** An otpauth:// URI as an SVG QR code in a `data:` URL (the CSP allows `img-src data:`). */
export async function qrCodeDataUrl(uri: string): Promise<string> {
  // Loaded at the first enrolment, not at start (the encoder and its PNG writer are never needed before).
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`;
}
