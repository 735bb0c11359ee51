"""The protocol buffer wire format, by hand, for the profiler's two formats (pprof's
Profile and the XSpace of traces) and PJRT's compile options (``backends/xla/pjrt.py``):
jaxlite has no protobuf dependency."""
import struct

_INT64 = 1 << 64


def varint(n):
  """``n`` as a protobuf varint (a negative int64 as its two's complement, as protobuf
  writes it)."""
  n &= _INT64 - 1
  out = bytearray()
  while True:
    byte, n = n & 0x7F, n >> 7
    out.append(byte | (0x80 if n else 0))
    if not n:
      return bytes(out)


def packed(values):
  """A packed repeated varint field's payload."""
  return b"".join(map(varint, values))


def message(fields):
  """Encode (field number, value) pairs: an int as a varint, a float as a double, a str
  or bytes (a string, a packed list, a sub-message) length-delimited."""
  out = bytearray()
  for number, value in fields:
    if isinstance(value, int):
      out += varint(number << 3) + varint(value)
    elif isinstance(value, float):
      out += varint(number << 3 | 1) + struct.pack("<d", value)
    else:
      value = value.encode() if isinstance(value, str) else value
      out += varint(number << 3 | 2) + varint(len(value)) + value
  return bytes(out)


def _readvarint(data, i):
  result = shift = 0
  while True:
    if i >= len(data):
      raise ValueError("truncated varint")
    byte = data[i]
    i += 1
    result |= (byte & 0x7F) << shift
    shift += 7
    if byte < 0x80:
      return result, i


def fields(data):
  """The (field number, value) pairs of an encoded message: varints as unsigned ints,
  64- and 32-bit fields as their 8 or 4 bytes, length-delimited ones as bytes. Raises
  ValueError on bytes that are no message."""
  i, out = 0, []
  while i < len(data):
    key, i = _readvarint(data, i)
    number, wire = key >> 3, key & 7
    if wire == 0:
      value, i = _readvarint(data, i)
    elif wire in (1, 5):
      size = 8 if wire == 1 else 4
      value, i = data[i:i + size], i + size
    elif wire == 2:
      size, i = _readvarint(data, i)
      value, i = data[i:i + size], i + size
    else:
      raise ValueError(f"unsupported wire type {wire}")
    if i > len(data) or number == 0:
      raise ValueError("truncated message")
    out.append((number, value))
  return out


def repeated(pairs, number) -> list:
  """The values of field ``number`` among ``fields``' pairs, in order."""
  return [value for n, value in pairs if n == number]


def int64(value):
  """A varint read by ``fields`` as the int64 it encodes."""
  return value - _INT64 if value >= 1 << 63 else value


def double(value):
  """A 64-bit field read by ``fields`` as the double it encodes."""
  return struct.unpack("<d", value)[0]
