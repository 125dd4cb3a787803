"""A Python gRPC client (grpcio) against a simulated device's endpoint with
grpc.local_channel_credentials(), as tools built on the emulator's Python stubs connect.
Messages are encoded by hand (no generated stubs needed). Prints one JSON line."""
import json
import sys

import grpc

CTL = "/android.emulation.control.EmulatorController/"


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def field_bytes(num, data):
    return varint((num << 3) | 2) + varint(len(data)) + data


def parse(data):
    """Top-level fields of a protobuf message: {number: [values]} (varints as int, others as bytes)."""
    out, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(data, i)
        elif wt == 2:
            n, i = read_varint(data, i)
            v, i = data[i:i + n], i + n
        elif wt == 1:
            v, i = data[i:i + 8], i + 8
        elif wt == 5:
            v, i = data[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def read_varint(data, i):
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def main():
    port = int(sys.argv[1])
    channel = grpc.secure_channel("localhost:%d" % port, grpc.local_channel_credentials(),
                                  options=[("grpc.max_receive_message_length", -1)])
    grpc.channel_ready_future(channel).result(timeout=30)
    raw = lambda method: channel.unary_unary(CTL + method, request_serializer=lambda b: b, response_deserializer=lambda b: b)
    status = parse(raw("getStatus")(b"", timeout=30))
    image = parse(raw("getScreenshot")(field_varint(1, 1), timeout=30))  # format = RGBA8888
    fmt = parse(image[1][0])
    touch = field_varint(1, 10) + field_varint(2, 10) + field_varint(3, 0) + field_varint(4, 0)
    raw("sendTouch")(field_bytes(1, touch), timeout=30)  # an all-zero-pressure touch: must be accepted
    print(json.dumps({
        "booted": bool(status.get(3, [0])[0]),
        "width": fmt.get(3, [0])[0],
        "height": fmt.get(4, [0])[0],
        "image_bytes": len(image.get(4, [b""])[0]),
    }))


if __name__ == "__main__":
    main()
