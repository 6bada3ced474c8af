// qrcode-terminal ships no types; this is the one function the CLI uses.
declare module 'qrcode-terminal' {
  const qrcode: {
    generate(text: string, options: { small?: boolean }, callback: (drawing: string) => void): void;
  };
  export default qrcode;
}
