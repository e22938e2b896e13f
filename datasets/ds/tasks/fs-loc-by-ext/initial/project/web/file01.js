
  return value;
  return value;
export function run() {

}
  return value;
}

  return value;
}



}
const value = 70;
  return value;
const value = 61;

  return value;

const value = 38;
  return value;
export function run() {

  return value;
  return value;
}

const value = 8;
}

}
const value = 27;
export function run() {
}

const value = 58;
const value = 84;
export function run() {

export function run() {
}
export function run() {
const value = 72;

}
  return value;
const value = 54;
}
}
  return value;
}
const value = 77;
const value = 40;
}
  return value;
}
export function run() {

const value = 9;
  return value;

const value = 64;

}
export function run() {

