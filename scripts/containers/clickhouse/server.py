# clickhouse-local's main from the engine library, with HTTP and TCP listeners, living while its
# standard input is open (as in scripts/clickhouse-server.mjs): argv[1] the library, the rest its args.
import ctypes, os, sys, threading
r, w = os.pipe()
parent = os.dup(0)
os.dup2(r, 0)
def watch():
    while os.read(parent, 4096):
        pass
    os.close(w)
threading.Thread(target=watch, daemon=True).start()
lib = ctypes.CDLL(sys.argv[1])
args = [b'clickhouse'] + [a.encode() for a in sys.argv[2:]]
argv = (ctypes.c_char_p * len(args))(*args)
lib.query_stable_v2.restype = ctypes.c_void_p
lib.query_stable_v2(len(args), argv)
