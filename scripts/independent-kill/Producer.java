// The independent scenario's producer: a plain Apache Kafka 4.1 Java producer (idempotence on, acks=all),
// run as a single-file source program (`java -cp '<jars>/*' Producer.java BOOTSTRAP PLAN`). It shares no
// code with mailstats. PLAN has one message a line, in send order:
//   t_ms <TAB> topic <TAB> key <TAB> r|b <TAB> value      (r: the value as written, b: base64 bytes)
// and each message is sent no earlier than t_ms after the start, so the stream is paced as planned.
import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class Producer {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    Path plan = Path.of(args[1]);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "independent-kill-producer");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    AtomicLong acked = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    Map<String, AtomicLong> perPartition = new ConcurrentHashMap<>();
    Map<String, Integer> keyPartition = new ConcurrentHashMap<>();
    long sent = 0;
    long start = System.currentTimeMillis();
    long lastReport = start;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
        BufferedReader in = Files.newBufferedReader(plan, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] f = line.split("\t", 5);
        long due = start + Long.parseLong(f[0]);
        long now = System.currentTimeMillis();
        if (due > now) Thread.sleep(due - now);
        String topic = f[1];
        String key = f[2];
        byte[] value =
            f[3].equals("b") ? Base64.getDecoder().decode(f[4]) : f[4].getBytes(StandardCharsets.UTF_8);
        producer.send(
            new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value),
            (md, err) -> {
              if (err != null) {
                failed.incrementAndGet();
                System.err.println("send failed: " + err);
              } else {
                acked.incrementAndGet();
                perPartition.computeIfAbsent(md.topic() + "/" + md.partition(), k -> new AtomicLong()).incrementAndGet();
                if (md.topic().endsWith("events")) keyPartition.putIfAbsent(key, md.partition());
              }
            });
        sent++;
        now = System.currentTimeMillis();
        if (now - lastReport >= 10_000) {
          lastReport = now;
          System.out.printf("producer: %.0f s, %d sent, %d acked%n", (now - start) / 1000.0, sent, acked.get());
        }
      }
      producer.flush();
    }
    long took = System.currentTimeMillis() - start;
    System.out.printf("producer: done in %.1f s: %d sent, %d acked, %d failed%n", took / 1000.0, sent, acked.get(), failed.get());
    for (Map.Entry<String, AtomicLong> e : new TreeMap<>(perPartition).entrySet())
      System.out.println("PARTITION " + e.getKey() + " " + e.getValue().get());
    for (Map.Entry<String, Integer> e : new TreeMap<>(keyPartition).entrySet())
      System.out.println("KEY " + e.getKey() + " " + e.getValue());
    System.exit(failed.get() == 0 && acked.get() == sent ? 0 : 1);
  }
}
