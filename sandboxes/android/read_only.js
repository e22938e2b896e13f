// Run before every page of a read-only phone: app data cannot be changed.
(() => {
  const refuse = () => { throw new DOMException("this device is a read-only view", "SecurityError"); };
  for (const name of ["setItem", "removeItem", "clear"]) {
    Object.defineProperty(Storage.prototype, name, { value: refuse, configurable: false });
  }
})();
